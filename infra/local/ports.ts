/**
 * The local runtime's ports, each overridable by its variable: `npm start` listens on them and `npm run sam:env`
 * points the SAM functions at them.
 */
import { numberEnv } from '#shared/settings/env.ts';

export const localPorts = () => ({
  port: numberEnv('PORT', 3000, { min: 0 }),
  sandboxPort: numberEnv('SANDBOX_PORT', 3001, { min: 0 }),
  dynamodbPort: numberEnv('DYNAMODB_PORT', 8000, { min: 0 }),
  s3Port: numberEnv('S3_PORT', 4569, { min: 0 }),
  sqsPort: numberEnv('SQS_PORT', 9324, { min: 0 }),
  secretsManagerPort: numberEnv('SECRETS_MANAGER_PORT', 9325, { min: 0 }),
  schedulerPort: numberEnv('SCHEDULER_PORT', 9326, { min: 0 }),
});
