(* The OCaml binding's cost against the C calls, as ratios:
   - Buffer.create of 64 KiB on host (the size the host caches), released by the collector, against
     rig_buffer_create + rig_buffer_release (both from the host's cache);
   - take + submit of an empty host launch, against the C calls;
   and the OCaml heap words each allocates. Run: dune exec bench/bench.exe
   (run-tests.sh's environment), or with ITERS=N. *)

external c_create : int -> int -> float = "bench_c_create"
external c_submit : int -> int -> float = "bench_c_submit"
external c_create_cached : int -> int -> float = "bench_c_create_cached"

let iters = match Sys.getenv_opt "ITERS" with Some n -> int_of_string n | None -> 200_000

let time f =
  let w0 = Gc.minor_words () in
  let t0 = Unix.gettimeofday () in
  f ();
  let t = (Unix.gettimeofday () -. t0) *. 1e9 /. float_of_int iters in
  (t, (Gc.minor_words () -. w0) /. float_of_int iters)

let best3 f = List.fold_left (fun (bt, bw) _ -> let t, w = f () in if t < bt then (t, w) else (bt, bw)) (infinity, 0.) [ 1; 2; 3 ]

let () =
  let bytes = 65536 in
  let ml_create, create_words =
    best3 (fun () ->
        time (fun () ->
            for _ = 1 to iters do
              ignore (Sys.opaque_identity (Rig.Buffer.create Rig.host bytes))
            done;
            Gc.full_major ()))
  in
  let c_create_ns = List.fold_left min infinity (List.init 3 (fun _ -> c_create iters bytes)) in
  (* Buffer.create from the cache alone: the C call fills the host's cache
     with [count] released buffers first, and the OCaml buffers are kept
     until the timing ends, then collected into the cache again. *)
  let count = 256 in
  let keep = Array.make count None in
  let cached () =
    ignore (c_create_cached count bytes);
    Gc.full_major ();
    let w0 = Gc.minor_words () in
    let t0 = Unix.gettimeofday () in
    for i = 0 to count - 1 do
      keep.(i) <- Some (Rig.Buffer.create Rig.host bytes)
    done;
    let t = (Unix.gettimeofday () -. t0) *. 1e9 /. float_of_int count in
    let w = (Gc.minor_words () -. w0) /. float_of_int count in
    Array.fill keep 0 count None;
    (t, w)
  in
  let ml_cached, cached_words =
    List.fold_left (fun (bt, bw) _ -> let t, w = cached () in if t < bt then (t, w) else (bt, bw)) (infinity, 0.)
      (List.init 20 Fun.id)
  in
  let c_cached = List.fold_left min infinity (List.init 20 (fun _ -> c_create_cached count bytes)) in
  let obj = In_channel_compat.read_file "kernel_empty.o" in
  let image = Result.get_ok (Rig.Image.load Rig.host obj) in
  let f = Option.get (Rig.Image.resolve image "empty") in
  let open Rig.Submission in
  let s = make Rig.host [| launch f ~params:0 |] in
  let k = block s 0 in
  let ml_submit, submit_words =
    best3 (fun () ->
        time (fun () ->
            for _ = 1 to iters do
              let r = take s in
              Run.groups r k 1 1 1;
              Run.threads r k 1 1 1;
              ignore (Sys.opaque_identity (Rig.submit r ~buffers:[||]))
            done))
  in
  let fn_ptr : int = Obj.magic (Obj.field (Obj.repr f) 1) in
  let c_submit_ns = List.fold_left min infinity (List.init 3 (fun _ -> c_submit iters fn_ptr)) in
  Printf.printf "OCaml %s, %d iterations, best of 3\n" Sys.ocaml_version iters;
  Printf.printf "| what | OCaml ns | C ns | ratio | OCaml heap words each |\n| --- | --- | --- | --- | --- |\n";
  Printf.printf "| Buffer.create 64 KiB on host + release by the GC | %.0f | %.0f | %.2f | %.1f |\n" ml_create
    c_create_ns (ml_create /. c_create_ns) create_words;
  Printf.printf "| Buffer.create 64 KiB on host from the cache (no release) | %.0f | %.0f | %.2f | %.1f |\n" ml_cached
    c_cached (ml_cached /. c_cached) cached_words;
  Printf.printf "| take + submit of an empty host launch | %.0f | %.0f | %.2f | %.1f |\n" ml_submit c_submit_ns
    (ml_submit /. c_submit_ns) submit_words
