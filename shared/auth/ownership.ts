/**
 * "403 forbidden: ... the resource belongs to another account" (contract, Authentication). Every business item
 * lives under its business's partition, so another account's id simply reads as missing there; a small global
 * item per contact, funnel stage, conversation, message and broadcast id, written in the record's create transaction, tells
 * the two cases apart.
 * It is read only on the not-found path, so found records cost nothing extra.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import type { TransactItem } from '#shared/events/outbox.ts';
import { ApiError, forbidden } from '#shared/http/errors.ts';
import { db, table } from '#shared/store/client.ts';
import { keys, type OwnedKind } from '#shared/store/keys.ts';

const label: Record<OwnedKind, string> = { contact: 'contact', stage: 'funnel stage', conversation: 'conversation', message: 'message', broadcast: 'broadcast' };
const foreignMessage = (kind: OwnedKind) => `This ${label[kind]} belongs to another account`;

/** The owner pointer of a new record: part of the record's create transaction. */
export const ownerPut = (kind: OwnedKind, id: string, businessId: string): TransactItem => ({
  Put: { TableName: table(), Item: { ...keys.recordOwner(kind, id), type: 'recordOwner', kind, businessId } },
});

/** The error for a record the caller's business does not hold: 403 when another business owns the id, else `notFoundError`. */
export async function missingRecord(kind: OwnedKind, id: string, businessId: string, notFoundError: ApiError): Promise<ApiError> {
  const { Item } = await db.send(new GetCommand({ TableName: table(), Key: keys.recordOwner(kind, id) }));
  return Item && Item.businessId !== businessId ? forbidden(foreignMessage(kind)) : notFoundError;
}

/** Whether `err` is the 403 of a `kind` record that belongs to another account (missingRecord's). */
export const isForeignRecord = (err: unknown, kind: OwnedKind): boolean =>
  err instanceof ApiError && err.status === 403 && err.body.message === foreignMessage(kind);
