// SPDX-License-Identifier: GPL-2.0
/*
 * baton: work that runs on baton_wq after a delay (struct baton_later),
 * timed by an hrtimer that expires in hard interrupt context: a pool's
 * decay and repair (pool.c) and an MPSC consumer's poll recheck (ring.c).
 *
 * Why not a delayed_work: its timer sits in the timer wheel of the CPU
 * that armed it, and the wheel runs from the timer softirq. Where that
 * softirq is deferred to ksoftirqd (always with "threadirqs"; on 6.1 also
 * whenever the softirqs of one interrupt ran over 2 ms), a SCHED_FIFO
 * task that holds the CPU starves ksoftirqd, and every wheel timer of
 * that CPU waits for as long as the task runs. A pool's decay, whose
 * work last ran there, then never came: the pool kept its memory while
 * every holder slept (selftests/pool.c, "decay_runs_while_an_rt_task_
 * holds_a_cpu", failed every run on a 6.1 booted with threadirqs). A
 * soft hrtimer has the same weakness (the MPSC recheck's did: its poller
 * slept for as long as the task ran). A
 * HRTIMER_MODE_REL_HARD timer expires from the timer interrupt itself,
 * on PREEMPT_RT too, and its callback only queues the work (the
 * workqueue's locks are raw spinlocks, so queueing is allowed there);
 * the unbound workqueue runs it on a CPU that is free.
 *
 * Stopping: the work may re-arm itself (the decay does, every period),
 * so baton_later_stop() raises ->stopped first; a work that starts after
 * that sees it and arms nothing. See baton_later_stop() for the order.
 */
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/workqueue.h>

#include "baton_kmod.h"
#include "compat.h"

static enum hrtimer_restart baton_later_fire(struct hrtimer *timer)
{
	struct baton_later *later = container_of(timer, struct baton_later,
						 timer);

	queue_work(baton_wq, &later->work);
	return HRTIMER_NORESTART;
}

void baton_later_init(struct baton_later *later, work_func_t fn)
{
	INIT_WORK(&later->work, fn);
	baton_hrtimer_setup(&later->timer, baton_later_fire, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_HARD);
	later->stopped = false;
}

/*
 * Run the work @ms milliseconds from now (0: now), replacing any time
 * set before, as mod_delayed_work() does. The slack (an eighth of the
 * delay) lets the timer share an interrupt with others; every caller's
 * delay is a period of housekeeping, not a deadline.
 */
void baton_later_arm(struct baton_later *later, unsigned int ms)
{
	u64 ns = (u64)ms * NSEC_PER_MSEC;

	if (READ_ONCE(later->stopped))
		return;
	if (!ms) {
		hrtimer_try_to_cancel(&later->timer);
		queue_work(baton_wq, &later->work);
		return;
	}
	hrtimer_start_range_ns(&later->timer, ns_to_ktime(ns), ns / 8,
			       HRTIMER_MODE_REL_HARD);
}

/*
 * Nothing runs or is armed once this returns; no caller may arm it
 * again. The first cancel_work_sync() waits out a work that read
 * ->stopped before it was raised (it may have armed the timer); the
 * hrtimer_cancel() then stops the timer, waiting out a callback that
 * may have queued the work; the second cancel_work_sync() removes that
 * queueing, or waits for a run that, having started after ->stopped
 * was raised (queue_work() and the work's start are ordered), arms
 * nothing.
 */
void baton_later_stop(struct baton_later *later)
{
	WRITE_ONCE(later->stopped, true);
	cancel_work_sync(&later->work);
	hrtimer_cancel(&later->timer);
	cancel_work_sync(&later->work);
}
