/* uclock.h - the TSC clock of user sessions (uclock.c). */
#ifndef MT_UCLOCK_H
#define MT_UCLOCK_H
#include <stdlib.h>
#include "mt_session.h"

/* Calibrate and enable it in a new session (when the TSC is usable). */
void mt_uclock_setup(struct mt_session *s);
/* Once a second at most: keep it on CLOCK_MONOTONIC. */
void mt_uclock_steer(struct mt_session *s);
#endif
