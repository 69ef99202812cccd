/**
 * `npm start`: the whole service on this machine. Ports (infra/local/ports.ts): PORT (API, 3000), SANDBOX_PORT (3001),
 * DYNAMODB_PORT (8000), S3_PORT (4569), SQS_PORT, SECRETS_MANAGER_PORT and SCHEDULER_PORT (DYNAMODB_PORT + 1324-1326) —
 * the ports `npm run sam:env` assumes. Ctrl-C stops all of it, and so does SIGINT or SIGTERM to the npm process alone
 * (the script `exec`s, so npm's signal reaches this process through tsx).
 */
import { startLocalStack } from './stack.ts';
import { localPorts } from './ports.ts';

const stack = await startLocalStack({ ...localPorts(), demo: true });

console.log(`
WhatsApp CRM service is running locally.

  Base URL:      ${stack.url}
  API key:       ${stack.demo!.apiKey}
  Business id:   ${stack.demo!.businessId}
  Sandbox:       ${stack.sandboxUrl}   (upstream stand-in; phone number id ${stack.demo!.phoneNumberId}, WABA id ${stack.demo!.wabaId})
  API reference: ${stack.url}/docs

DYNAMODB_ENDPOINT=${stack.dynamodbEndpoint}
TABLE_NAME=${stack.tableName}
S3_ENDPOINT=${stack.s3Endpoint}
AWS_ENDPOINT_URL_SECRETS_MANAGER=${process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER}

Try:
  curl -H "Authorization: Bearer ${stack.demo!.apiKey}" ${stack.url}/team/v1
`);

let stopping = false;
const shutdown = async () => {
  if (stopping) return;
  stopping = true;
  console.log('Stopping...');
  await stack.stop();
  process.exit(0);
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
