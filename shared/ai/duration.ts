/** A pause's length in minutes (1-1440), as the AI controls and a send's `ai.pauseDuration` take it. No dependencies. */
import * as v from 'valibot';

export const MIN_PAUSE_MINUTES = 1;
export const MAX_PAUSE_MINUTES = 1440;
export const DEFAULT_PAUSE_MINUTES = 5;

const DURATION_MESSAGE = `duration must be a number of minutes between ${MIN_PAUSE_MINUTES} and ${MAX_PAUSE_MINUTES} (1-1440 minutes)`;

export const durationMinutes = (message = DURATION_MESSAGE) =>
  v.pipe(v.number(message), v.finite(message), v.minValue(MIN_PAUSE_MINUTES, message), v.maxValue(MAX_PAUSE_MINUTES, message));
