/** autocannon ships no types; the load test uses its documented options and result fields. */
declare module 'autocannon' {
  const autocannon: (options: Record<string, unknown>) => Promise<any>;
  export default autocannon;
}
