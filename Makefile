# The two commands of the README, and the benchmark.
.PHONY: run test bench
run:   ## build, install, start a throwaway cluster and show pg_idgen in psql
	bash tests/demo.sh
test:  ## every test layer, ending with "summary: N passed, N failed"
	bash tests/all.sh
bench: ## ratios against baselines measured in the same run
	bash tests/bench/bench.sh
