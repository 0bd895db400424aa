"""gbconn — AMQP connection parameters for the gridbroker example clients.

The three examples beside this file (panda_producer.py, dirac_pilot.py,
event_subscriber.py) connect the way the gridbroker CLI does: from the
[amqp] section of a gridbroker config file (the ini files scripts/services
writes, e.g. run/gridbroker-panda.conf), with command-line flags that
override single keys. Kept in one module so the examples show messaging,
not ini parsing; copy it along with an example you adapt.

Keys read from [amqp]: host, port, vhost, user, password_file (or
password), heartbeat, tls, tls_ca_file, tls_cert_file, tls_key_file,
tls_verify. Everything else in the file (the worker's settings) is ignored.
"""

import argparse
import configparser
import ssl

import pika

# Exit codes shared by the examples.
EXIT_OK = 0
EXIT_USAGE = 2       # bad flags or an unreadable config / password file
EXIT_AMQP = 3        # could not connect, or the broker refused something


class ConfigError(Exception):
    """The config file or a flag cannot give usable connection parameters."""


def add_arguments(parser, default_config=None):
    """Add --config and the per-key override flags to an argparse parser."""
    g = parser.add_argument_group("connection")
    g.add_argument("-c", "--config", default=default_config,
                   help="gridbroker config file whose [amqp] section to use"
                        + (f" (default {default_config})" if default_config else ""))
    g.add_argument("--host", help="broker host (overrides the config)")
    g.add_argument("--port", type=int, help="broker port")
    g.add_argument("--vhost", help="virtual host")
    g.add_argument("--user", help="RabbitMQ account")
    g.add_argument("--password-file", help="file holding the account's password")


def from_file(path):
    """Arguments as add_arguments gives them: only the config file, no overrides."""
    return argparse.Namespace(config=path, host=None, port=None, vhost=None,
                              user=None, password_file=None)


def _read_password(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.readline().rstrip("\r\n")
    except OSError as e:
        raise ConfigError(f"password file {path}: {e.strerror}") from e


def parameters(args, client_name):
    """pika.ConnectionParameters from args (see add_arguments).

    Contract: returns parameters and the account name (the AMQP user, which
    a pilot needs for its user_id property); raises ConfigError when the
    config file cannot be read or a value is invalid.
    """
    amqp = {}
    if args.config:
        cp = configparser.ConfigParser(interpolation=None, strict=False)
        try:
            with open(args.config, encoding="utf-8") as f:
                cp.read_file(f)
        except (OSError, configparser.Error) as e:
            raise ConfigError(f"config {args.config}: {e}") from e
        if cp.has_section("amqp"):
            amqp = dict(cp.items("amqp"))
    for key, flag in (("host", args.host), ("port", args.port), ("vhost", args.vhost),
                      ("user", args.user), ("password_file", args.password_file)):
        if flag is not None:
            amqp[key] = str(flag)
    user = amqp.get("user", "guest")
    if "password_file" in amqp and amqp["password_file"]:
        password = _read_password(amqp["password_file"])
    else:
        password = amqp.get("password", "guest")
    try:
        port = int(amqp.get("port", "5672"))
        heartbeat = int(amqp.get("heartbeat", "30"))
        use_tls = int(amqp.get("tls", "0")) == 1
    except ValueError as e:
        raise ConfigError(f"config: {e}") from e
    tls = None
    if use_tls:
        ctx = ssl.create_default_context(cafile=amqp.get("tls_ca_file") or None)
        if amqp.get("tls_verify", "1") == "0":
            ctx.check_hostname = False
            ctx.verify_mode = ssl.CERT_NONE
        if amqp.get("tls_cert_file"):
            ctx.load_cert_chain(amqp["tls_cert_file"], amqp.get("tls_key_file") or None)
        tls = pika.SSLOptions(ctx, amqp.get("host", "127.0.0.1"))
    params = pika.ConnectionParameters(
        host=amqp.get("host", "127.0.0.1"), port=port,
        virtual_host=amqp.get("vhost", "/"),
        credentials=pika.PlainCredentials(user, password),
        heartbeat=heartbeat, ssl_options=tls,
        client_properties={"connection_name": client_name},
        connection_attempts=3, retry_delay=1, blocked_connection_timeout=30)
    return params, user


def argument_parser(doc):
    """An ArgumentParser whose --help shows the program's docstring as written.

    Usage errors exit with argparse's 2, which is EXIT_USAGE.
    """
    return argparse.ArgumentParser(
        description=doc,
        formatter_class=argparse.RawDescriptionHelpFormatter)
