/** Every scenario of `npm run bench`, in the order a full run takes them. */
import { FEATURE_SCENARIOS } from './feature-scenarios.ts';
import { CUSTOMER_SCENARIOS, type Scenario } from './scenarios.ts';

export const SCENARIOS: readonly Scenario[] = [...CUSTOMER_SCENARIOS, ...FEATURE_SCENARIOS];
