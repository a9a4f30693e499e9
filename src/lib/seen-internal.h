/* seen-internal.h - what a checkpoint needs of a seen-set (internal).
 *
 * A checkpoint saves a Bloom seen-set as its layers' bit arrays and
 * restores it into a seen-set made with the same config: the layers'
 * shapes follow from the config and their index, so the arrays are all
 * that must be kept, and the counts are recomputed from them. */
#ifndef SIEVE_SEEN_INTERNAL_H
#define SIEVE_SEEN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "sieve/seen.h"

/* Bloom layers in use; 0 for the exact kind, which has none to save. */
unsigned seen_layer_count(const sieve_seen *s);

/* Layer i's bit array and its size in bytes (a multiple of 8). The array
 * stays where it is for the seen-set's life. */
uint64_t *seen_layer_words(sieve_seen *s, unsigned i, size_t *bytes);

/* Keys the newest layer has taken: what decides when it grows. */
uint64_t seen_newest_added(const sieve_seen *s);

/* Gives a new Bloom seen-set the shape of a saved one: nlayers layers
 * (adding them), the newest having taken newest_added keys. The caller
 * then fills each layer's array and calls seen_restored(). SIEVE_EFORMAT
 * if that shape cannot come from s's config (s is left as it was);
 * SIEVE_ENOMEM. */
int seen_restore_shape(sieve_seen *s, unsigned nlayers, uint64_t newest_added);

/* Recounts what the layers' arrays hold, after they were filled; the
 * newest layer's count is raised to what its array holds, if more. */
void seen_restored(sieve_seen *s);

#endif
