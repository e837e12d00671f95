import type { ParamDoc } from '../http/route-doc.ts';

/** The largest id a JSON number carries exactly: 2^53 - 1 has 16 digits. */
const MAX_ID_DIGITS = 16;

/**
 * A canonical customer id: digits only, no sign, no leading zero, 1 to 2^53-1. Anything else
 * (percent-encodings included) is not a customer path, so it never reaches the upstream.
 */
export function parseCustomerId(segment: string): number | null {
  const length = segment.length;
  if (length === 0 || length > MAX_ID_DIGITS) return null;
  const first = segment.charCodeAt(0);
  if (first < 49 || first > 57) return null; // '1'..'9'
  for (let i = 1; i < length; i++) {
    const c = segment.charCodeAt(i);
    if (c < 48 || c > 57) return null;
  }
  const id = Number(segment);
  return id <= Number.MAX_SAFE_INTEGER ? id : null;
}

/** A path parameter holding a canonical id, as the OpenAPI document describes it. */
export function idParam(name: string, description: string): ParamDoc {
  return {
    name,
    in: 'path',
    required: true,
    description: `${description} Digits only, no sign or leading zero; any other spelling is 404.`,
    schema: { type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER },
  };
}
