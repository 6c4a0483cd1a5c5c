(* The OCaml binding's cost against the C calls, as ratios, with the OCaml
   heap words each call allocates (Gc.minor_words before and after):
   - Buffer.create of 64 KiB on host from the cache: the thread's share of
     the host's cache (16 buffers) is filled first, then [batch] creates are
     timed, OCaml's and C's, and released after the timing;
   - Buffer.create of 64 KiB on host released by the collector, against C's
     create + release at once, and against C's create and release in the
     batches the collector releases in (the minor collections' count);
   - take + submit of an empty host launch, against the C calls, and the
     words of the submit alone.
   Run: dune exec bench/bench.exe (run-tests.sh's environment); ITERS=N
   sets the iterations, ROUNDS=N the rounds of the cache's creates.
   ONLY=submit or ONLY=c_submit runs that one loop once, ITERS times, and
   prints nothing: for counting instructions per call under callgrind
   (valgrind --tool=callgrind), which a loaded machine does not skew. *)

external c_create : int -> int -> float = "bench_c_create"
external c_create_batches : int -> int -> int -> float = "bench_c_create_batches"
external c_submit : int -> int -> float = "bench_c_submit"
external c_fill_cache : int -> int -> unit = "bench_c_fill_cache"
external c_create_cached : int -> int -> float = "bench_c_create_cached"
external now : unit -> (float[@unboxed]) = "bench_now_byte" "bench_now" [@@noalloc]

let env name default = match Sys.getenv_opt name with Some n -> int_of_string n | None -> default
let iters = env "ITERS" 200_000
let rounds = env "ROUNDS" 2_000
let bytes = 65536
let best n f = List.fold_left (fun best _ -> min best (f ())) infinity (List.init n Fun.id)

(* ns and words per iteration of f over iters, the best of 3 by time. *)
let time f =
  let once () =
    let w0 = Gc.minor_words () and t0 = now () in
    f ();
    let t = (now () -. t0) /. float_of_int iters in
    (t, (Gc.minor_words () -. w0) /. float_of_int iters)
  in
  List.fold_left (fun (bt, bw) _ -> let t, w = once () in if t < bt then (t, w) else (bt, bw))
    (infinity, 0.) [ 1; 2; 3 ]

(* Creates from the cache: [batch] at a time, into keep, timed alone; the
   buffers then go back to the cache through a minor collection. *)
let batch = 16

let ml_cached () =
  let keep = Array.make batch None in
  c_fill_cache batch bytes;
  let total = ref 0. and words = ref 0. in
  for _ = 1 to rounds do
    let w0 = Gc.minor_words () and t0 = now () in
    for i = 0 to batch - 1 do
      Array.unsafe_set keep i (Some (Rig.Buffer.create Rig.host bytes))
    done;
    total := !total +. (now () -. t0);
    words := !words +. (Gc.minor_words () -. w0);
    Array.fill keep 0 batch None;
    Gc.minor ()
  done;
  let n = float_of_int (rounds * batch) in
  (!total /. n, !words /. n)

type acc = { mutable w : float } (* a flat float: its updates allocate nothing *)

let row what (ml, words) c =
  Printf.printf "| %s | %.0f | %.0f | %.2f | %.1f |\n" what ml c (ml /. c) words

(* The one-launch submission of the empty kernel on host, its block and
   the function's pointer (an int, as Rig's stubs keep it). *)
let empty_launch () =
  let obj = In_channel_compat.read_file "kernel_empty.o" in
  let image = Result.get_ok (Rig.Image.load Rig.host obj) in
  let f = Option.get (Rig.Image.resolve image "empty") in
  let s = Rig.Submission.(make Rig.host [| launch f ~params:0 |]) in
  let fn_ptr : int = Obj.magic (Obj.field (Obj.repr f) 1) in
  (s, Rig.Submission.block s 0, fn_ptr)

(* iters takes and submits of s's launch, adding the submit's words to w. *)
let submits s k w =
  let open Rig.Submission in
  for _ = 1 to iters do
    let r = take s in
    Run.groups r k 1 1 1;
    Run.threads r k 1 1 1;
    let w0 = Gc.minor_words () in
    ignore (Sys.opaque_identity (Rig.submit r ~buffers:[||]));
    w.w <- w.w +. (Gc.minor_words () -. w0)
  done

let () =
  match Sys.getenv_opt "ONLY" with
  | Some "submit" -> let s, k, _ = empty_launch () in submits s k { w = 0. }; exit 0
  | Some "c_submit" -> let _, _, f = empty_launch () in ignore (c_submit iters f); exit 0
  | Some other -> failwith ("ONLY=" ^ other ^ ": submit or c_submit")
  | None -> ()

let () =
  let cached = List.fold_left (fun (bt, bw) _ -> let t, w = ml_cached () in if t < bt then (t, w) else (bt, bw))
      (infinity, 0.) [ 1; 2; 3 ] in
  let c_cached = best 3 (fun () -> c_fill_cache batch bytes; c_create_cached rounds batch) in
  let minors = (Gc.quick_stat ()).Gc.minor_collections in
  let gc_release =
    time (fun () ->
        for _ = 1 to iters do
          ignore (Sys.opaque_identity (Rig.Buffer.create Rig.host bytes))
        done)
  in
  let minors = (Gc.quick_stat ()).Gc.minor_collections - minors in
  let per_minor = max 1 (3 * iters / max 1 minors) in
  let c_at_once = best 3 (fun () -> c_create iters bytes) in
  let c_batches = best 3 (fun () -> c_create_batches iters bytes per_minor) in
  let s, k, fn_ptr = empty_launch () in
  let submit_words = { w = 0. } in
  let submit = time (fun () -> submits s k submit_words) in
  let c_submit_ns = best 3 (fun () -> c_submit iters fn_ptr) in
  Printf.printf "OCaml %s: %d iterations, best of 3\n" Sys.ocaml_version iters;
  Printf.printf "| what | OCaml ns | C ns | ratio | OCaml heap words each |\n| --- | --- | --- | --- | --- |\n";
  row (Printf.sprintf "Buffer.create 64 KiB on host from the cache (%d rounds of %d)" rounds batch) cached c_cached;
  row "Buffer.create 64 KiB on host, released by the GC; C: released at once" gc_release c_at_once;
  row (Printf.sprintf "the same; C: released in the GC's batches (%d)" per_minor) gc_release c_batches;
  row "take + submit of an empty host launch" submit c_submit_ns;
  Printf.printf "submit alone: %.1f OCaml heap words each (its result is an int)\n"
    (submit_words.w /. float_of_int (3 * iters))
