import type { ParamValue } from './params.ts';
import { PathTemplate } from './template.ts';

/**
 * Takes values in one template's parameter order to another's: `indices[i]` is the position, in
 * the source values, of the target's i-th parameter.
 */
export class Projection {
  readonly #indices: readonly number[];
  readonly target: PathTemplate;

  constructor(from: readonly string[], target: PathTemplate) {
    this.target = target;
    this.#indices = target.params.map((name) => {
      const index = from.indexOf(name);
      if (index === -1) throw new Error(`${target.text}: {${name}} is not among ${from.join(', ')}`);
      return index;
    });
  }

  /** The source values in the target's parameter order. */
  values(values: readonly ParamValue[]): ParamValue[] {
    return this.#indices.map((i) => values[i] as ParamValue);
  }

  /** The target path built from the source values. */
  build(values: readonly ParamValue[]): string {
    return this.target.build(this.values(values));
  }
}

/** `t`'s first segments up to and including its n-th parameter, as a template ("/api/customers/{customerId}"). */
function prefixThrough(t: PathTemplate, paramCount: number): PathTemplate {
  const segments = t.text.slice(1).split('/');
  let seen = 0;
  for (let i = 0; i < segments.length; i++) {
    if ((segments[i] as string).startsWith('{') && ++seen === paramCount) return PathTemplate.parse(`/${segments.slice(0, i + 1).join('/')}`);
  }
  throw new Error(`${t.text} has fewer than ${paramCount} parameters`);
}

/** Does `outer`'s segment list start with all of `inner`'s (parameters match parameters), and go further? */
function liesBelow(outer: PathTemplate, inner: PathTemplate): boolean {
  const a = outer.segments;
  const b = inner.segments;
  if (b.length >= a.length) return false;
  return b.every((segment, i) => segment === a[i]);
}

/** For a template: the items it lies below, each as the prefix template to build its path from our values. */
export function ancestorsOf(t: PathTemplate, items: readonly PathTemplate[]): readonly Projection[] {
  return items.filter((item) => liesBelow(t, item)).map((item) => new Projection(t.params, prefixThrough(t, item.params.length)));
}
