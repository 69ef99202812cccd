/**
 * Every cdk-nag finding that stays carries its reason here (cdk-nag v3 acknowledges through CDK's own
 * Validations API; each finding id is acknowledged on its own).
 */
import { type Stack, Validations, aws_dynamodb as dynamodb, aws_s3 as s3 } from 'aws-cdk-lib';
import type { ServiceResources } from './resources.ts';
import { INFERENCE_PROFILE } from './functions.ts';

export function acknowledgeNagFindings(stack: Stack, resources: ServiceResources, businessSecretsPrefix: string, aiModels: string[]): void {
  const logicalId = (construct: { node: { defaultChild?: unknown } }) => stack.getLogicalId(construct.node.defaultChild as dynamodb.CfnGlobalTable | s3.CfnBucket);
  const stackWide: Record<string, string> = {
    'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]':
      'AWSLambdaBasicExecutionRole is the minimal managed policy for writing function logs.',
    'AwsSolutions-APIG4': 'Routes are authorized inside each function by API key (hashed, revocable, scoped) as the contract requires; the upstream webhook is authorized by its HMAC signature.',
    'AwsSolutions-L1': 'The contract fixes the runtime at nodejs22.x.',
    'Serverless-LambdaLatestVersion': 'The contract fixes the runtime at nodejs22.x.',
    'Serverless-LambdaDLQ': 'Functions are invoked synchronously (API Gateway) or by SQS event sources whose queues have their own DLQs; an async DLQ would never receive anything.',
    'Serverless-LambdaDefaultMemorySize': 'Memory is set per function in the route table; 256 MB is the measured need of the thin HTTP functions.',
    'Serverless-SQSRedrivePolicy': 'Dead-letter queues are the end of the redrive chain; they have no DLQ of their own.',
    'AwsSolutions-SQS3': 'Dead-letter queues are the end of the redrive chain; they have no DLQ of their own.',
    'Serverless-LambdaEventSourceMappingDestination':
      'SQS event sources do not support on-failure destinations; failed messages go to each queue\'s dead-letter queue through its redrive policy.',
    'AwsSolutions-IAM5[Resource::*]': 'X-Ray tracing (PutTraceSegments, PutTelemetryRecords) accepts no resource-level permission.',
    [`AwsSolutions-IAM5[Resource::<${logicalId(resources.table)}.Arn>/index/*]`]:
      'Queries on the table\'s own indexes (gsi1, shard); the grant names no other table.',
    [`AwsSolutions-IAM5[Resource::<${logicalId(resources.bucket)}.Arn>/*]`]: 'Objects of the media bucket only.',
    'AwsSolutions-IAM5[Action::s3:Abort*]': 'CDK\'s read/write grant on the media bucket only (multipart uploads of large media).',
    'AwsSolutions-IAM5[Action::s3:DeleteObject*]': 'CDK\'s read/write grant on the media bucket only.',
    'AwsSolutions-IAM5[Action::s3:GetBucket*]': 'CDK\'s read/write grant on the media bucket only.',
    'AwsSolutions-IAM5[Action::s3:GetObject*]': 'CDK\'s read/write grant on the media bucket only.',
    'AwsSolutions-IAM5[Action::s3:List*]': 'CDK\'s read/write grant on the media bucket only.',
    'AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:scheduler:<AWS::Region>:<AWS::AccountId>:schedule/default/broadcast-*]':
      'One schedule per broadcast, created and deleted by the broadcast functions; limited to the broadcast- prefix.',
    [`AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${businessSecretsPrefix}*]`]:
      'One secret per business (its own WhatsApp access token), created by the admin CLI under this stack\'s prefix; read only.',
  };
  for (const model of aiModels.filter((m) => INFERENCE_PROFILE.test(m))) {
    stackWide[`AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:bedrock:*::foundation-model/${model.replace(INFERENCE_PROFILE, '')}]`] =
      `The inference profile ${model} routes each call to this one model in any Region of its geography; AWS requires the model's grant in each of them.`;
  }
  for (const [id, reason] of Object.entries(stackWide)) Validations.of(stack).acknowledge({ id, reason });
  Validations.of(resources.upstreamSecret).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason: 'The WhatsApp access token and app secret are issued by Meta and rotated there; the operator updates this secret (its app secret and verify token start random, never a public placeholder).',
  });
  Validations.of(resources.verifyTokenSeed).acknowledge({
    id: 'AwsSolutions-SMG4',
    reason: 'Only the source of the initial random verify token, copied into UpstreamCredentials at creation; nothing reads it afterwards.',
  });
  Validations.of(resources.accessLogs).acknowledge({ id: 'AwsSolutions-S1', reason: 'This is the access-log bucket itself; logging it into itself would loop.' });
}
