/**
 * Powertools Parameters' SecretsProvider, one per container, and the error it throws. secrets.ts loads this module
 * on the first read: it is a side bundle (`#side/secrets-provider`), so the error class the readers check against
 * comes from here too, never from a copy of its own in the function's bundle.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';

export { GetParameterError } from '@aws-lambda-powertools/parameters/errors';

export const provider = new SecretsProvider();
