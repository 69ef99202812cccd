/**
 * Powertools Parameters' SecretsProvider, one per container, and the error it throws. secrets.ts imports this module
 * on the first read (a chunk of its own, see shared/lang/on-first-use.ts); the readers take the error class they
 * check from here, beside the provider that throws it.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';

export { GetParameterError } from '@aws-lambda-powertools/parameters/errors';

export const provider = new SecretsProvider();
