package main

/*
#include <signal.h>

// Resets SIGILL to its default action (the Go runtime handles it) and
// raises it: the process dies by it, as by an illegal instruction.
static void jb_raise_sigill(void) {
	struct sigaction sa = {0};
	sigset_t set;
	sa.sa_handler = SIG_DFL;
	sigaction(SIGILL, &sa, 0);
	sigemptyset(&set);
	sigaddset(&set, SIGILL);
	sigprocmask(SIG_UNBLOCK, &set, 0);
	raise(SIGILL);
}
*/
import "C"

func raiseSIGILL() { C.jb_raise_sigill() }
