// `import x from '…' with { type: 'file' }` yields a path (inside the binary: /$bunfs/…).
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  const path: string;
  export default path;
}
declare module 'swagger-ui-dist/swagger-ui.css' {
  const path: string;
  export default path;
}
