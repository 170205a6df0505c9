/* check_run.h -- the one way a Check test executable runs its suite. */
#ifndef DYADC_CHECK_RUN_H
#define DYADC_CHECK_RUN_H

#include <check.h>

/* run every test of s; the number that failed */
static inline int check_failures(Suite *s) {
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed;
}

#endif
