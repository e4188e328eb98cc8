/** esbuild bundles `.yaml` files as text (the seed manifests the console offers to load). */
declare module '*.yaml' {
  const text: string;
  export default text;
}
