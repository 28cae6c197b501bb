/**
 * The failure type a worker gives a call of another worker whose process is gone
 * (worker/dead-workers): the server accepts only application failures from a worker, so a call
 * failed on a dead worker's behalf says so by this type, and the retry that follows reads it as it
 * reads a heartbeat timeout (activities/sticky-release.ts).
 */
export const DEAD_WORKER_FAILURE_TYPE = 'DeadWorker';
