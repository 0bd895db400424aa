/*
** limits.h — bounds shared by every reader of outside input.
**
** A string of a message (codec/) and a string of a scenario or grid file
** (explain/, through base/jsonutil.h) obey the same cap, so anything a
** file can describe can also travel as a message, and the other way round.
** It lives in the lowest room because both readers need it and neither
** may include the other.
*/
#ifndef GB_LIMITS_H
#define GB_LIMITS_H

/* Bytes of the longest string field, the terminating NUL included. */
#define GB_MAX_STRING 256

#endif
