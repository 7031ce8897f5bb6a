# dlcomm plot: data in <collective>.dat (bytes bw time_us), one block per line
set logscale x 2
set xlabel "size"
set grid
set key left top
set xtics ("8 B" 8, "32 B" 32, "1 KiB" 1024, "32 KiB" 32768, "1 MiB" 1048576, "32 MiB" 33554432, "1 GiB" 1073741824)
set xrange [7.2:4.72446e+09]
set terminal pngcairo size 1000,600 noenhanced
set output "results/reference/h200-1gpu/sweep-1/plots/.allreduce-busbw.png.tmp"
set title "allreduce float32 sum, out-of-place\nhost vm; 1 rank; dlcomm 0.1.0; NCCL 2.28.3+cuda13.0; Open MPI v4.1.6"
set ylabel "algbw (GB/s; busbw is 0 with one rank)"
unset logscale y
plot "results/reference/h200-1gpu/sweep-1/plots/allreduce.dat" index 0 using 1:2 with linespoints title "default"
set output
set terminal pngcairo size 1000,600 noenhanced
set output "results/reference/h200-1gpu/sweep-1/plots/.allreduce-time.png.tmp"
set title "allreduce float32 sum, out-of-place\nhost vm; 1 rank; dlcomm 0.1.0; NCCL 2.28.3+cuda13.0; Open MPI v4.1.6"
set ylabel "time per call (us)"
set logscale y 10
plot "results/reference/h200-1gpu/sweep-1/plots/allreduce.dat" index 0 using 1:3 with linespoints title "default"
set output
set xtics ("8 B" 8, "32 B" 32, "1 KiB" 1024, "32 KiB" 32768, "1 MiB" 1048576, "32 MiB" 33554432, "1 GiB" 1073741824)
set xrange [7.2:4.72446e+09]
set terminal pngcairo size 1000,600 noenhanced
set output "results/reference/h200-1gpu/sweep-1/plots/.allgather-busbw.png.tmp"
set title "allgather float32 none, out-of-place\nhost vm; 1 rank; dlcomm 0.1.0; NCCL 2.28.3+cuda13.0; Open MPI v4.1.6"
set ylabel "algbw (GB/s; busbw is 0 with one rank)"
unset logscale y
plot "results/reference/h200-1gpu/sweep-1/plots/allgather.dat" index 0 using 1:2 with linespoints title "default"
set output
set terminal pngcairo size 1000,600 noenhanced
set output "results/reference/h200-1gpu/sweep-1/plots/.allgather-time.png.tmp"
set title "allgather float32 none, out-of-place\nhost vm; 1 rank; dlcomm 0.1.0; NCCL 2.28.3+cuda13.0; Open MPI v4.1.6"
set ylabel "time per call (us)"
set logscale y 10
plot "results/reference/h200-1gpu/sweep-1/plots/allgather.dat" index 0 using 1:3 with linespoints title "default"
set output
set xtics ("8 B" 8, "32 B" 32, "1 KiB" 1024, "32 KiB" 32768, "1 MiB" 1048576, "32 MiB" 33554432, "1 GiB" 1073741824)
set xrange [7.2:4.72446e+09]
set terminal pngcairo size 1000,600 noenhanced
set output "results/reference/h200-1gpu/sweep-1/plots/.broadcast-busbw.png.tmp"
set title "broadcast float32 none, out-of-place\nhost vm; 1 rank; dlcomm 0.1.0; NCCL 2.28.3+cuda13.0; Open MPI v4.1.6"
set ylabel "busbw (GB/s)"
unset logscale y
plot "results/reference/h200-1gpu/sweep-1/plots/broadcast.dat" index 0 using 1:2 with linespoints title "default"
set output
set terminal pngcairo size 1000,600 noenhanced
set output "results/reference/h200-1gpu/sweep-1/plots/.broadcast-time.png.tmp"
set title "broadcast float32 none, out-of-place\nhost vm; 1 rank; dlcomm 0.1.0; NCCL 2.28.3+cuda13.0; Open MPI v4.1.6"
set ylabel "time per call (us)"
set logscale y 10
plot "results/reference/h200-1gpu/sweep-1/plots/broadcast.dat" index 0 using 1:3 with linespoints title "default"
set output
