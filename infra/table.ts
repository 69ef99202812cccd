/**
 * The single table, described once as plain data: the CDK stack builds it from this, and the local
 * runtime and the tests create it in DynamoDB Local from the same description.
 *
 * - pk/sk: every item. Business items start their pk with `B#{businessId}` (tenancy first).
 * - gsi1 (gsi1pk/gsi1sk): secondary look-ups and ordered lists (see shared/store/keys.ts).
 * - shard (spk/ssk): the sparse, sharded, filter-ready contact projection segments count on;
 *   it projects only the compact `proj` attribute (see shared/contacts/projection.ts).
 * - ttl: expiry of rate-limit windows, idempotency records and other short-lived items.
 */
export const tableDefinition = {
  partitionKey: 'pk',
  sortKey: 'sk',
  ttlAttribute: 'ttl',
  indexes: [
    { name: 'gsi1', partitionKey: 'gsi1pk', sortKey: 'gsi1sk', projection: 'ALL' as const, include: [] as string[] },
    { name: 'shard', partitionKey: 'spk', sortKey: 'ssk', projection: 'INCLUDE' as const, include: ['proj'] },
  ],
} as const;

export type TableDefinition = typeof tableDefinition;

/** CreateTable input for DynamoDB Local (on-demand). */
export const createTableInput = (tableName: string) => ({
  TableName: tableName,
  BillingMode: 'PAY_PER_REQUEST' as const,
  AttributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' as const },
    { AttributeName: 'sk', AttributeType: 'S' as const },
    { AttributeName: 'gsi1pk', AttributeType: 'S' as const },
    { AttributeName: 'gsi1sk', AttributeType: 'S' as const },
    { AttributeName: 'spk', AttributeType: 'S' as const },
    { AttributeName: 'ssk', AttributeType: 'S' as const },
  ],
  KeySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' as const },
    { AttributeName: 'sk', KeyType: 'RANGE' as const },
  ],
  GlobalSecondaryIndexes: tableDefinition.indexes.map((ix) => ({
    IndexName: ix.name,
    KeySchema: [
      { AttributeName: ix.partitionKey, KeyType: 'HASH' as const },
      { AttributeName: ix.sortKey, KeyType: 'RANGE' as const },
    ],
    Projection: ix.projection === 'ALL'
      ? { ProjectionType: 'ALL' as const }
      : { ProjectionType: 'INCLUDE' as const, NonKeyAttributes: [...ix.include] },
  })),
});
