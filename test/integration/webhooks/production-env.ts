/** Production network policy (as in the CDK stack): no loopback or private targets. Imported first. */
process.env.ALLOW_PRIVATE_TARGETS = 'false';
process.env.WEBHOOK_RETRY_BASE_SECONDS = '0.05';
process.env.WEBHOOK_MAX_ATTEMPTS = '3';
