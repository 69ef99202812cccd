/**
 * Funnel event payloads: the contract's shapes for created, updated, reordered and stage_changed;
 * funnel_stage.deleted (left open by the contract) is `{ stage_id, name, deleted_at }`.
 */
import { newEvent, type DomainEvent } from '#shared/events/outbox.ts';
import type { FunnelStage } from './model.ts';

export const stageCreated = (bid: string, s: FunnelStage): DomainEvent =>
  newEvent(bid, 'funnel_stage.created', { stage_id: s.id, name: s.name, position: s.position, color: s.color, created_at: s.created_at });

export const stageUpdated = (bid: string, s: FunnelStage): DomainEvent =>
  newEvent(bid, 'funnel_stage.updated', { stage_id: s.id, name: s.name, color: s.color, updated_at: s.updated_at });

export const stageDeleted = (bid: string, s: FunnelStage, deletedAt: string): DomainEvent =>
  newEvent(bid, 'funnel_stage.deleted', { stage_id: s.id, name: s.name, deleted_at: deletedAt });

export const stagesReordered = (bid: string, stageIds: string[], reorderedAt: string): DomainEvent =>
  newEvent(bid, 'funnel_stages.reordered', { stage_ids: stageIds, reordered_at: reorderedAt });

export interface StageRef {
  id: string;
  name: string;
}

export const contactStageChanged = (
  bid: string,
  contact: { id: string; phone_number: string | null },
  previous: StageRef | null,
  next: StageRef | null,
  movedAt: string,
): DomainEvent =>
  newEvent(bid, 'contact.stage_changed', {
    contact_id: contact.id,
    phone_number: contact.phone_number,
    previous_stage_id: previous?.id ?? null,
    previous_stage_name: previous?.name ?? null,
    new_stage_id: next?.id ?? null,
    new_stage_name: next?.name ?? null,
    moved_at: movedAt,
  });
