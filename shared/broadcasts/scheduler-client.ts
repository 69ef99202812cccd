/**
 * The EventBridge Scheduler client, one per container, and what scheduler.ts sends and catches. scheduler.ts
 * imports this module on the first scheduled broadcast (or cancelled schedule), so that the broadcast functions'
 * cold starts, and every immediate broadcast, do without it.
 */
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { config } from '#shared/config.ts';

export { ConflictException, CreateScheduleCommand, DeleteScheduleCommand, ResourceNotFoundException, UpdateScheduleCommand } from '@aws-sdk/client-scheduler';

export const scheduler = new SchedulerClient({ region: config.region });
