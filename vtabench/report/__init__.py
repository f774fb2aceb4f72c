"""Pictures and reports of runs: the RTL's pipeline timeline (trace, timeline, breakdown), plots
(matplotlib), the RTL coverage report, GTKWave save files. docs/visualize.md shows each."""
