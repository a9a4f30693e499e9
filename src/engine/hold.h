/* hold.h - records the embedder holds back from the end of their
 * transfer until it releases them (sieve_crawl_transfer_hold()). */
#ifndef SIEVE_HOLD_H
#define SIEVE_HOLD_H

#include "xfer.h"

/* The rest of xfer_end_fetch() for a transfer whose record the embedder
 * holds: when the hold is released already, the record goes out and the
 * URL is done now, as without one; else the record, the transfer and
 * the URL are copied out of the slot and wait for the release, which
 * hands them to the worker (hold_deliver()). */
void hold_keep(xfer *x, const char *final_url, const char *error, sieve_crawl_outcome outcome);

/* On the worker's thread, before it waits in curl: false when a hold was
 * released meanwhile (deliver it instead of waiting); else true, and the
 * next release wakes the worker, until hold_awake(). */
bool hold_sleep(worker *w);

/* On the worker's thread, after its wait: releases no longer wake it. */
void hold_awake(worker *w);

/* On the worker's thread: delivers the records whose holds were
 * released, then reports their URLs done, in that order; returns how
 * many. */
unsigned hold_deliver(worker *w);

#endif
