/*
** gbtest.h — small helpers shared by the cmocka unit tests.
**
** cmocka 1.1.5 compares only floats (single precision); brokerage numbers
** need doubles, so assert_near() compares with a relative tolerance and
** prints both values on failure.
*/
#ifndef GB_TEST_H
#define GB_TEST_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#define assert_near(a, b, rel)                                               \
	do {                                                                 \
		double a_ = (a), b_ = (b);                                   \
		double tol_ = (rel) * fmax(1e-300, fmax(fabs(a_), fabs(b_))); \
		if (!(fabs(a_ - b_) <= tol_))                                \
			fail_msg("%s = %.17g, expected %.17g (rel %g)", #a,  \
				 a_, b_, (double)(rel));                     \
	} while (0)

#endif
