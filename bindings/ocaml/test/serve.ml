(* Another machine for the tests: the build's `rig serve` on a loopback
   port (as tests/remote does), with a key file of its own. *)
open Check

let contains s sub =
  let n = String.length sub in
  let rec at i = i + n <= String.length s && (String.sub s i n = sub || at (i + 1)) in
  at 0

(* Starts `rig serve --listen 127.0.0.1:0 --key KEY`; its first line says
   the port. *)
let serve exe key =
  let out_r, out_w = Unix.pipe () in
  let log = Unix.openfile (Filename.temp_file "rig-serve" ".log") [ Unix.O_WRONLY ] 0 in
  let pid =
    Unix.create_process exe [| exe; "serve"; "--listen"; "127.0.0.1:0"; "--key"; key |] Unix.stdin out_w log
  in
  Unix.close out_w;
  Unix.close log;
  let ic = Unix.in_channel_of_descr out_r in
  let line = try input_line ic with End_of_file -> "" in
  close_in ic;
  match Scanf.sscanf line "rig serve: listening on %s" Fun.id with
  | address -> (pid, address)
  | exception _ ->
      Unix.kill pid Sys.sigkill;
      skip ("rig serve did not say its port: " ^ line)

let stop pid =
  (try Unix.kill pid Sys.sigterm with Unix.Unix_error _ -> ());
  try ignore (Unix.waitpid [] pid) with Unix.Unix_error _ -> ()

(* A server and its key file, both gone at exit; skips, saying why, where
   RIG_EXE (the build's rig, run-tests.sh sets it) is absent. *)
let start () =
  let exe =
    match Sys.getenv_opt "RIG_EXE" with
    | Some e when Sys.file_exists e -> e
    | _ -> skip "RIG_EXE is not set to the build's rig"
  in
  let key = Filename.temp_file "rig-key" "" in
  let oc = open_out key in
  output_string oc "the OCaml binding's test key";
  close_out oc;
  let pid, address = serve exe key in
  at_exit (fun () -> stop pid; Sys.remove key);
  (pid, address, key)

(* The machine's host, or a skip where the remote driver is absent. *)
let open_host ~machine opener =
  match Rig.open_host ~machine opener with
  | Ok h -> h
  | Error why when contains why "librig-driver-remote" -> skip ("no remote driver: " ^ why)
  | Error why ->
      check ("open_host: " ^ why) false;
      finish "open_host"
