/** A template's header media parameter when it is a link (`{ type: 'image', image: { link } }` and the like). No dependencies. */
import { isComponent } from './component-kind.ts';

export interface HeaderLink {
  /** The header's parameter object, changed in place when the file goes by id instead. */
  param: Record<string, any>;
  type: 'image' | 'video' | 'document';
  link: string;
}

export function templateHeaderLink(payload: Record<string, unknown>): HeaderLink | undefined {
  const components = (payload.template as { components?: Record<string, any>[] } | undefined)?.components ?? [];
  const param = components.find((c) => isComponent(c, 'header'))?.parameters?.[0];
  const type = param?.type;
  const link = type === 'image' || type === 'video' || type === 'document' ? param[type]?.link : undefined;
  return typeof link === 'string' ? { param, type, link } : undefined;
}
