(* Buffer.of_io (an io device's contents as they are) and Claim.read (a
   claim that reads, rig_buffer_claim). *)
open Check

let lost = function Rig.Lost _ -> true | _ -> false

let of_io () =
  let path = Filename.temp_file "rig-of-io" ".txt" in
  let oc = open_out_bin path in
  output_string oc "hello world";
  close_out oc;
  let f = Result.get_ok (Rig.open_io (Rig_edge.file ~read_only:true path)) in
  let budget = Rig.allocated f in
  let w = Rig.Buffer.of_io ~off:6 f 5 in
  check "a buffer of the file's bytes" (Rig.Buffer.length w = 5 && Rig.Buffer.device w == f);
  let out = Bytes.create 5 in
  Rig.Buffer.blit_to_bytes w 0 out 0 5;
  check "reads the contents as they are" (Bytes.to_string out = "world");
  let h = Rig.Buffer.create Rig.host 5 in
  Rig.Buffer.copy ~src:w ~dst:h;
  Rig.Buffer.blit_to_bytes h 0 out 0 5;
  check "copies to the host" (Bytes.to_string out = "world");
  check "no charge to the budget" (Rig.allocated f = budget);
  let whole = Rig.Buffer.of_io f 11 in
  check "off defaults to 0" (Rig.Buffer.length whole = 11);
  let past = Rig.Buffer.of_io ~off:100 f 5 in
  raises "reading past the end is the io library's error"
    (function Sys_error _ -> true | _ -> false)
    (fun () -> Rig.Buffer.blit_to_bytes past 0 out 0 5);
  raises "of_io of a device that is not io" invalid (fun () -> Rig.Buffer.of_io Rig.host 4);
  raises "a negative offset" invalid (fun () -> Rig.Buffer.of_io ~off:(-1) f 4);
  raises "a negative length" invalid (fun () -> Rig.Buffer.of_io f (-4));
  Rig.close f;
  raises "of_io of a closed device" lost (fun () -> Rig.Buffer.of_io f 4);
  Sys.remove path

let read_claims () =
  let m = Result.get_ok (Rig.memory_device "claims-read") in
  let b = Rig.Buffer.create m 16 in
  Rig.Buffer.fill b 1;
  check "a read claim alone is the only claim" (Rig.Claim.read b Rig.Claim.only);
  check "a donor is not alone while it reads"
    (Rig.Claim.read b (fun _ -> Rig.Claim.with_ b (fun c -> not (Rig.Claim.only c))));
  check "a view's read claims the allocation"
    (Rig.Claim.read (Rig.Buffer.view ~off:4 ~len:4 b) (fun _ -> Rig.Claim.with_ b (fun c -> not (Rig.Claim.only c))));
  check "it ends when its function returns" (Rig.Claim.with_ b Rig.Claim.only);
  (try Rig.Claim.read b (fun _ -> raise Exit) with Exit -> ());
  check "it ends when its function raises" (Rig.Claim.with_ b Rig.Claim.only);
  let ended = Rig.Claim.read b Fun.id in
  raises "an ended claim" invalid (fun () -> Rig.Claim.only ended);
  (* A write a lost device never reached: the read depends on it. *)
  let gone = Result.get_ok (Rig.memory_device "claims-read-lost") in
  let g = Rig.Buffer.create gone 16 in
  ignore (Rig.Buffer.submit_fill g 2);
  Rig.close gone;
  raises "a read of a lost device's memory" lost (fun () -> Rig.Claim.read g ignore)

let () =
  of_io ();
  read_claims ();
  finish "test_io_claims"
