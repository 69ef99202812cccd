/**
 * How an SQS worker fails. An ordinary error fails its own record (a partial batch failure: retried, then
 * dead-lettered after the queue's maxReceiveCount). A `ConfigurationError` fails the whole invocation instead:
 * the function can do none of its work until its deployment is fixed, so every record of the batch goes back to the
 * queue (and in the end to its DLQ, nothing lost), and Lambda logs the invocation's error, which names the variable.
 * A body that is not JSON reads as undefined, for the worker's own validation to drop.
 */
import { BatchProcessor, EventType } from '@aws-lambda-powertools/batch';
import type { EventSourceDataClassTypes, FailureResponse } from '@aws-lambda-powertools/batch/types';
import type { SQSRecord } from 'aws-lambda';
import { ConfigurationError } from '#shared/settings/env.ts';

/** Throws `err` when it is a configuration error; otherwise returns (the caller fails just its record). */
export function throwIfConfigurationError(err: unknown): void {
  if (err instanceof ConfigurationError) throw err;
}

/** Powertools' SQS batch processor, with configuration errors failing the invocation rather than one record. */
export class WorkerBatchProcessor extends BatchProcessor {
  constructor() {
    super(EventType.SQS);
  }

  override failureHandler(record: EventSourceDataClassTypes, error: Error): FailureResponse {
    throwIfConfigurationError(error);
    return super.failureHandler(record, error);
  }
}

/** The record's body as JSON, or undefined when it is not JSON. */
export function jsonBody(record: SQSRecord): unknown {
  try {
    return JSON.parse(record.body);
  } catch {
    return undefined;
  }
}
