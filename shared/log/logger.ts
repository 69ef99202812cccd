/** One structured JSON logger per container (AWS Lambda Powertools Logger). */
import { Logger } from '@aws-lambda-powertools/logger';
import { config } from '#shared/config.ts';

export const logger = new Logger({
  serviceName: config.serviceName,
  logLevel: (process.env.NODE_ENV === 'test' && !process.env.LOG_LEVEL ? 'SILENT' : config.logLevel) as any,
});
