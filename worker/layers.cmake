# worker/layers.cmake — the rooms of worker/, lowest layer first.
#
# A file in a room may include headers of its own room, of the rooms listed
# before it, and of engine/ (below them all); never of a room listed after
# it. CMakeLists.txt builds one static library per room that links only the
# room before it, so a call into a higher room does not link, and
# tests/layers.cmake (ctest -L unit, "unit.layers") checks every include
# against this list. To add a room, put its name where it belongs here.
#
#   base      utilities: arena, clock, log, time format, host lists, JSON
#             helpers, configuration, metrics
#   amqp      RabbitMQ: topology, the event-loop client, the blocking one
#   model     the grid model, the task-queue index, one decide step per kind
#   codec     msgpack: requests, events and replies, validated
#   store     MariaDB: prepared statements only
#   report    decision -> JSON record, JSON record -> text, summaries
#   explain   scenario files: JSON <-> model
#   pipeline  the request runner, its route table, the periodic work
#   cli       the `gridbroker` commands (an executable, not a library)
#   daemon    `gridbroker-worker`: loop, signals, HTTP (an executable)
set(GB_LAYERS base amqp model codec store report explain pipeline cli daemon)
# Rooms that are programs rather than libraries.
set(GB_PROGRAM_ROOMS cli daemon)
