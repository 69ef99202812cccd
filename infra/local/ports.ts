/**
 * The local runtime's ports, each overridable by its variable: `npm start` listens on them and `npm run sam:env`
 * points the SAM functions at them.
 *
 * The queue, Secrets Manager and Scheduler stand-ins default to DYNAMODB_PORT + 1324, 1325 and 1326 (9324-9326 for the
 * default 8000): two stacks started with their own PORT, SANDBOX_PORT, DYNAMODB_PORT and S3_PORT (decisions.md) get
 * their own stand-ins too, and the admin CLI, told only the stack's DYNAMODB_ENDPOINT, finds its Secrets Manager.
 */
import { numberEnv } from '#shared/settings/env.ts';

const OFFSETS = { sqs: 1324, secretsManager: 1325, scheduler: 1326 } as const;

/** A stand-in's default port beside DynamoDB Local's (any free port when DynamoDB's is, or past the last port). */
export const standInPort = (dynamodbPort: number, standIn: keyof typeof OFFSETS): number =>
  dynamodbPort === 0 || dynamodbPort + OFFSETS[standIn] > 65_535 ? 0 : dynamodbPort + OFFSETS[standIn];

export const localPorts = () => {
  const dynamodbPort = numberEnv('DYNAMODB_PORT', 8000, { min: 0 });
  return {
    port: numberEnv('PORT', 3000, { min: 0 }),
    sandboxPort: numberEnv('SANDBOX_PORT', 3001, { min: 0 }),
    dynamodbPort,
    s3Port: numberEnv('S3_PORT', 4569, { min: 0 }),
    sqsPort: numberEnv('SQS_PORT', standInPort(dynamodbPort, 'sqs'), { min: 0 }),
    secretsManagerPort: numberEnv('SECRETS_MANAGER_PORT', standInPort(dynamodbPort, 'secretsManager'), { min: 0 }),
    schedulerPort: numberEnv('SCHEDULER_PORT', standInPort(dynamodbPort, 'scheduler'), { min: 0 }),
  };
};
