/** A stage of the business's one sales funnel, as the API returns it. */
export interface FunnelStage {
  id: string;
  name: string;
  position: number;
  color: string;
  /** Contacts currently in the stage: a counter changed in the same transaction as every stage move. */
  contact_count: number;
  created_at: string;
  updated_at: string;
}

export const DEFAULT_STAGE_COLOR = '#6366f1';
export const MAX_STAGES = 50;
