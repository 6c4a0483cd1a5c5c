/* SPDX-License-Identifier: MIT */
/* fault.h: the io library's watch of its mappings for SIGBUS (fault.c). */
#ifndef RIG_IO_FAULT_H
#define RIG_IO_FAULT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Watches [host, host+bytes), file offset offset, mapped with prot: a
 * SIGBUS there puts zeros in the page's place and stores the page's file
 * offset + 1 into *word, if it holds 0. False where no watch can be made
 * (no memory, no handler): the caller unmaps and fails. Thread-safe. */
bool io_fault_watch(_Atomic uint64_t *word, void *host, size_t bytes, uint64_t offset, int prot);

/* Ends the watch of the mapping at host, before its munmap. */
void io_fault_unwatch(void *host);

/* A fork (io_fork): prepare holds the handler's installation, so that a
 * child that maps pages finds it free; the other phases give it back. A
 * slot a thread of the parent was claiming stays claimed in the child:
 * one slot less, no wait. */
void io_fault_fork(uint32_t phase);

#endif
