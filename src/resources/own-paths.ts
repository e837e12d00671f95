/** The API root: the one URL a client needs to know. */
export const API_ROOT = '/api';
/** The OpenAPI document of the routes. */
export const OPENAPI_PATH = '/api/openapi.json';
/** Paths the gateway answers itself, whatever the resources declare. */
export const OWN_PATHS: readonly string[] = [API_ROOT, OPENAPI_PATH];
