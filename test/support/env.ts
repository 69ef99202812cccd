/**
 * Environment every test file starts with (before any service module reads shared/config.ts), on top of what
 * global-setup.ts set for the run (the table, the queue stand-ins).
 */
process.env.NODE_ENV = 'test';
process.env.TABLE_NAME ??= 'wa-crm-test';
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_ACCESS_KEY_ID ??= 'local';
process.env.AWS_SECRET_ACCESS_KEY ??= 'local';
process.env.MEDIA_BUCKET ??= 'wa-crm-media';
// The local stack's AI settings (deployed defaults: Bedrock, 3 s); AI_BASE_URL is set where a responder runs.
process.env.AI_PROVIDER ??= 'openai';
process.env.AI_MODEL ??= 'sandbox-echo';
process.env.AI_DEBOUNCE_SECONDS ??= '1';
process.env.ALLOW_PRIVATE_TARGETS ??= '1';

/**
 * Sets `vars` in process.env for one test file and answers a function that puts back what was there before
 * (unset keys are deleted again), also for `alsoRestore`: keys the file sets itself later.
 */
export function overrideEnv(vars: Record<string, string>, alsoRestore: string[] = []): () => void {
  const previous = Object.fromEntries([...Object.keys(vars), ...alsoRestore].map((k) => [k, process.env[k]]));
  Object.assign(process.env, vars);
  return () => {
    for (const [k, val] of Object.entries(previous)) {
      if (val === undefined) delete process.env[k];
      else process.env[k] = val;
    }
  };
}
