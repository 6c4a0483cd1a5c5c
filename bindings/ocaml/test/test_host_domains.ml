(* Buffer.of_bigarray from several domains at once (OCaml 5): each lends
   arrays of its own, fills them through rig and reads them back, while
   the others' collections run the finalisers that release buffers and
   rig's release callbacks queue the arrays' roots from whichever domain
   moves the host's memory. Every array goes once its buffer is
   unreachable. *)
open Check
open Bigarray

let domains = 4
let rounds = 200
let finalised = Atomic.make 0

let worker i () =
  let errors = ref 0 in
  for r = 1 to rounds do
    let a = Array1.create int8_unsigned c_layout (1024 + r) in
    Gc.finalise (fun _ -> Atomic.incr finalised) a;
    let b = Rig.Buffer.of_bigarray a in
    let byte = (i * 31 + r) land 0xff in
    Rig.Buffer.fill b byte;
    if a.{0} <> byte || a.{1023 + r} <> byte then incr errors;
    if r mod 50 = 0 then Rig.free_cache Rig.host
  done;
  !errors

let () =
  let ds = List.init domains (fun i -> Domain.spawn (worker i)) in
  let errors = List.fold_left (fun n d -> n + Domain.join d) 0 ds in
  check "every domain's arrays hold rig's fills" (errors = 0);
  let rec settle k =
    Gc.full_major ();
    Rig.free_cache Rig.host;
    Gc.full_major ();
    if Atomic.get finalised < domains * rounds && k > 0 then settle (k - 1)
  in
  settle 10;
  check
    (Printf.sprintf "every array goes (%d of %d)" (Atomic.get finalised) (domains * rounds))
    (Atomic.get finalised = domains * rounds);
  finish "test_host_domains"
