/** Short delivery timings for the webhook tests; imported first, before any module reads them. */
process.env.WEBHOOK_RETRY_BASE_SECONDS = '0.05';
process.env.WEBHOOK_RETRY_FACTOR = '2';
process.env.WEBHOOK_MAX_ATTEMPTS = '5';
// Long enough that a loaded machine (the whole suite on 2 cores) does not turn slow answers into retries.
process.env.WEBHOOK_TIMEOUT_MS = '3000';
process.env.WEBHOOK_LANE_WAIT_SECONDS = '0.05';
