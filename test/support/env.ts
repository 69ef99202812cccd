/** Environment every test file starts with (before any service module reads shared/config.ts). */
process.env.NODE_ENV = 'test';
process.env.TABLE_NAME ??= 'wa-crm-test';
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
process.env.LOCAL_QUEUES ??= '1';
process.env.ALLOW_PRIVATE_TARGETS ??= '1';
process.env.UPSTREAM_TOKEN ??= 'sandbox-access-token';
process.env.UPSTREAM_APP_SECRET ??= 'sandbox-app-secret';
process.env.UPSTREAM_VERIFY_TOKEN ??= 'sandbox-verify-token';
