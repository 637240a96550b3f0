// The wire types the client's API names (JSONValue, Patch, the action bodies) come with it: an
// app writes `import PosternAuth` and nothing else.
@_exported import PosternAPI
