// cluster-key-slot ships no type declarations; this is the one function used.
declare module 'cluster-key-slot' {
  /** The Redis Cluster hash slot (0..16383) of a key, honouring {hash tags}. */
  function calculateSlot(key: string): number;
  export = calculateSlot;
}
