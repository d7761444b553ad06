-- Issue #25: the default embedder is now the shipped USE-Lite model, whose vectors have 512
-- dimensions. The column already takes any size; this adds the cosine HNSW index for 512-d
-- rows, beside the 384-d one of migration 0001 (partial expression indexes, one per size).
CREATE INDEX IF NOT EXISTS tool_embeddings_512_hnsw ON tool_embeddings
  USING hnsw ((embedding::vector(512)) vector_cosine_ops) WHERE dimensions = 512;
