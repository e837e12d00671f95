import { parseParam, type ParamType } from './params.ts';
import type { PathTemplate } from './template.ts';

/** A template with the types of its parameters (in path order): what decides which paths it matches. */
export interface TypedTemplate {
  readonly template: PathTemplate;
  readonly types: readonly ParamType[];
}

/** A value of both types: every canonical integer is also a "string" value. */
function sharedValue(a: ParamType, b: ParamType): string {
  return a === 'integer' || b === 'integer' ? '1' : 'x';
}

/**
 * A path both templates match, or null when there is none. Segment by segment: two literals must
 * be equal, a literal facing a parameter must be a value of its type ("featured" is a "string"
 * value, not an "integer" one), and two parameters always share a value. Two such templates would
 * make one path name two resources: the router picks one, while the cache, a collection's members
 * and purge may take the other.
 */
export function sharedPath(a: TypedTemplate, b: TypedTemplate): string | null {
  const left = a.template.segments;
  const right = b.template.segments;
  if (left.length !== right.length) return null;
  let path = '';
  let leftParam = 0;
  let rightParam = 0;
  for (let i = 0; i < left.length; i++) {
    const l = left[i] as string | null;
    const r = right[i] as string | null;
    const lType = l === null ? (a.types[leftParam++] as ParamType) : null;
    const rType = r === null ? (b.types[rightParam++] as ParamType) : null;
    let segment: string;
    if (l !== null && r !== null) {
      if (l !== r) return null;
      segment = l;
    } else if (l !== null) {
      if (parseParam(rType as ParamType, l) === null) return null;
      segment = l;
    } else if (r !== null) {
      if (parseParam(lType as ParamType, r) === null) return null;
      segment = r;
    } else {
      segment = sharedValue(lType as ParamType, rType as ParamType);
    }
    path += `/${segment}`;
  }
  return path === '' ? '/' : path;
}
