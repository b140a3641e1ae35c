"""The staged pipeline for registered public benchmarks (`lasagna benchmark run NAME
--data-dir DIR`), after OpenViking's RAG benchmark: gen (index, retrieve, generate), eval
(F1, judge accuracy, refusal heuristic), del (drop the index); each stage resumable, its
results merged into one report."""
