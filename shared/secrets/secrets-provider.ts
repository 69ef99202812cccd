/**
 * Powertools Parameters' SecretsProvider, one per container, and the error it throws. secrets.ts imports this module
 * on the first read (inlined, see shared/lang/on-first-use.ts); the readers take the error class they check from
 * here, beside the provider that throws it. Not a side bundle: every request of the functions that load it reads a
 * secret, and a side bundle's own copy of the SDK core would cost that first request more than it saves at load.
 */
import { SecretsProvider } from '@aws-lambda-powertools/parameters/secrets';

export { GetParameterError } from '@aws-lambda-powertools/parameters/errors';

export const provider = new SecretsProvider();
