/* replaces: static void rwake_joiners(selector *s, void *arg) */
/* (In a handout the Redis frontier's join polls, rjoin_body: nothing wakes it.) */
