-- Issue #29: every slot names the install folder it runs from, so the folder sweep knows which
-- folders are in use (the version installed before the first rollout has no staged install and
-- its folder was not recorded anywhere once a promotion moved the plugin row on).
ALTER TABLE deployments ADD COLUMN folder text;
UPDATE deployments SET folder = install->>'cachePath'
  WHERE install IS NOT NULL AND install->>'cachePath' IS NOT NULL AND COALESCE(install->>'inPlace', 'false') <> 'true';
UPDATE deployments d SET folder = p.source->>'cachePath'
  FROM plugins p
  WHERE d.plugin_id = p.id AND d.install IS NULL AND d.status = 'active' AND p.source->>'cachePath' IS NOT NULL
    AND COALESCE(p.source->>'inPlace', 'false') <> 'true';
-- Issue #29: besides tools, a canary serves the resources, resource templates and prompts it
-- declares exactly as the active slot does ({"resources": [uri], "templates": [uriTemplate],
-- "prompts": [name]}); reads, subscriptions, prompts and completions of those are routed by slot.
ALTER TABLE deployments ADD COLUMN routable_surface jsonb NOT NULL DEFAULT '{}'::jsonb;
