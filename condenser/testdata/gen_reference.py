# Regenerates reference_pipeline.json with the Python reference (openhands-sdk 1.43.1):
#   $(bash /work/shared/reference/setup.sh --print) condenser/testdata/gen_reference.py
from openhands.sdk import LLM
from openhands.sdk.context.condenser import LLMSummarizingCondenser, NoOpCondenser, PipelineCondenser

c = LLMSummarizingCondenser(llm=LLM(model="openai/gpt-4o", usage_id="condenser"), max_size=80, keep_first=4, max_tokens=100000)
p = PipelineCondenser(condensers=[NoOpCondenser(), c])
open("condenser/testdata/reference_pipeline.json", "w").write(p.model_dump_json(exclude_none=True) + "\n")
