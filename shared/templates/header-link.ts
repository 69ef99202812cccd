/** A template's header media parameter when it is a link (`{ type: 'image', image: { link } }` and the like). No dependencies. */
import { isComponent } from './component-kind.ts';

export interface HeaderLink {
  /** The header's parameter object, changed in place when the file goes by id instead. */
  param: Record<string, any>;
  /** The parameter's member that holds the file (`gif` for a GIF header). */
  key: 'image' | 'video' | 'document' | 'gif';
  /** The kind of file it is: a GIF header's is an MP4 video. */
  type: 'image' | 'video' | 'document';
  link: string;
}

const FILE_KINDS = { image: 'image', video: 'video', document: 'document', gif: 'video' } as const;

export function templateHeaderLink(payload: Record<string, unknown>): HeaderLink | undefined {
  const components = (payload.template as { components?: Record<string, any>[] } | undefined)?.components ?? [];
  const param = components.find((c) => isComponent(c, 'header'))?.parameters?.[0];
  const key = param?.type;
  if (typeof key !== 'string' || !Object.hasOwn(FILE_KINDS, key)) return undefined;
  const link = param[key]?.link;
  return typeof link === 'string' ? { param, key: key as HeaderLink['key'], type: FILE_KINDS[key as HeaderLink['key']], link } : undefined;
}
